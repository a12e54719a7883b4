"""The solver's streets family: see README.md beside this file."""
