"""Import a measured run: one reader per benchmark output format, and `read_benchmark` to pick one.

Every reader returns an ImportResult: the runs it read (one per load level) and every input line it did
not use, verbatim, with the reason. Input it cannot use at all raises ServewiseInputError naming the
line or field.
"""
