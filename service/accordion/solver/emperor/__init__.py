"""The solver's emperor family: see README.md beside this file."""
