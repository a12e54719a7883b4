"""The solver's klondike family: see README.md beside this file."""
