"""The load tool behind ``accordion-load``: scenarios, players, stats, thresholds and reports.

* ``scenario``: stages (a rate or players over time, with ramps) and the mix of calls (TOML).
* ``runner``: the players, the open loop (a schedule of calls) and the closed loop.
* ``stats``: what was measured, the JSON report (series, histogram, errors with messages).
* ``thresholds``: ``--fail-if`` conditions.
* ``html_report``: the HTML report with plots (matplotlib, the ``load`` extra).
* ``cli``: the command line.
"""
