"""Byte units, defined once: binary (KiB, MiB, GiB = 2^10, 2^20, 2^30 bytes) and decimal (KB, MB, GB = 10^3...).

Calculators keep bytes as integers; divide by these only to display or to read a printed figure.
"""

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30
TIB = 1 << 40

KB = 1000
MB = 1000**2
GB = 1000**3
