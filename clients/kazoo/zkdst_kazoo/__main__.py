"""python -m zkdst_kazoo RECIPE: runs one Kazoo recipe's workload against
the served ensemble zkdst describes in the environment."""

import sys

from . import barrier, counter, double_barrier, election, lock, party, queue, rwlock, semaphore
from .env import Env

WORKLOADS = {
    "lock": lock.main,
    "election": election.main,
    "queue": queue.main,
    "locking-queue": queue.main_locking,
    "counter": counter.main,
    "semaphore": semaphore.main,
    "rwlock": rwlock.main,
    "double-barrier": double_barrier.main,
    "barrier": barrier.main,
    "party": party.main,
}


def main(argv):
    """RECIPE [--broken NAME]: NAME a deliberately broken copy (broken.py)."""
    from .broken import LOCKS

    args = argv[1:]
    broken = None
    if len(args) == 3 and args[1] == "--broken" and args[2] in LOCKS and args[0] == "lock":
        broken = args[2]
        args = args[:1]
    if len(args) != 1 or args[0] not in WORKLOADS:
        print(
            f"usage: python -m zkdst_kazoo {{{','.join(sorted(WORKLOADS))}}} [--broken {{{','.join(sorted(LOCKS))}}}]",
            file=sys.stderr,
        )
        return 3
    if broken:
        WORKLOADS[args[0]](Env(), broken)
    else:
        WORKLOADS[args[0]](Env())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
