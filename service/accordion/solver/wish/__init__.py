"""The solver's wish family: see README.md beside this file."""
