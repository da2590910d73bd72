"""Kazoo's recipes as zkdst workloads: each drives one recipe the way an
application does and writes zkdst's operation record, so zkdst's checkers
judge Kazoo as they judge zkdst's own recipes."""
