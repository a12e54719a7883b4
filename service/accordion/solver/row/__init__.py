"""The solver's row family: see README.md beside this file."""
