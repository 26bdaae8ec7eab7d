"""servewise tests: the folders mirror the repository tree (see docs/development.md, "Tests")."""
