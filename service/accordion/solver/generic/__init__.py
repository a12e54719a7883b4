"""The solver's generic family: see README.md beside this file."""
