"""Deliberately broken copies of Kazoo recipes: each differs from Kazoo
2.11's code in one line, to show the Kazoo scenarios catch such a bug
(scenarios/kazoo/planted/). Copied from kazoo/recipe/lock.py (Apache-2.0,
the Kazoo authors); the changed line is marked BROKEN."""

from kazoo.exceptions import CancelledError, LockTimeout, NoNodeError
from kazoo.recipe.lock import Lock


class PredecessorGoneLock(Lock):
    """Takes the lock as soon as the node it waits on goes: the classic
    mistake the ZooKeeper recipe warns of — the predecessor may have gone
    because its session ended while a node before it still holds."""

    def _inner_acquire(self, blocking, timeout, ephemeral=True):
        if self.is_acquired:
            if not blocking:
                return False
            from kazoo.retry import ForceRetryError

            raise ForceRetryError()
        if not self.assured_path:
            self._ensure_path()
        node = None
        if self.create_tried:
            node = self._find_node()
        else:
            self.create_tried = True
        if not node:
            node = self.client.create(self.create_path, self.data, ephemeral=ephemeral, sequence=True)
            node = node[len(self.path) + 1 :]
        self.node = node
        while True:
            self.wake_event.clear()
            if self.cancelled:
                raise CancelledError()
            predecessor = self._get_predecessor(node)
            if predecessor is None:
                return True
            if not blocking:
                return False
            predecessor = self.path + "/" + predecessor
            self.client.add_listener(self._watch_session)
            try:
                self.client.get(predecessor, self._watch_predecessor)
            except NoNodeError:
                pass
            else:
                self.wake_event.wait(timeout)
                if not self.wake_event.is_set():
                    raise LockTimeout("Failed to acquire lock on %s after %s seconds" % (self.path, timeout))
                return True  # BROKEN: Kazoo looks at the children again
            finally:
                self.client.remove_listener(self._watch_session)


LOCKS = {
    "predecessor-gone": PredecessorGoneLock,
}
