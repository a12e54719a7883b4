"""The solver's spider family: see README.md beside this file."""
