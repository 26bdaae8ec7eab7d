"""servewise tests: the folders mirror the repository tree (see README "Tests")."""
