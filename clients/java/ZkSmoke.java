// A smoke of Java's own ZooKeeper client (Debian's zookeeper 3.8 jar)
// against `zkdst serve`: create, get, set, a data watch that fires, multi
// (one that commits, one that fails as a whole), sync and, in mode
// "expire", a session expiry the client learns of on reconnect.
//
//     java -cp CLASSPATH ZkSmoke CONNECT_STRING steps|expire
//
// One line per check, "ok <what>" or "FAIL <what>: <detail>" ("# ..." lines
// are commentary); the exit status is 0 only if every check passed. Every
// wait is bounded (WAIT_S). In mode "expire" the caller cuts this client off
// from every server for longer than its session timeout, starting after
// the steps are done: the program waits for Disconnected, then Expired,
// then opens a new session and reads back what it wrote.
//
// Driven by scenarios/tests/java_smoke.rs; see docs/serve.md.

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

public final class ZkSmoke {
    /** The scenario's session timeout. */
    static final int SESSION_TIMEOUT_MS = 4000;
    /** The bound on every wait. */
    static final long WAIT_S = 20;
    static final String ROOT = "/java-smoke";

    static int failures = 0;
    static final long START = System.nanoTime();
    static final ExecutorService CALLS = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "zksmoke-call");
        t.setDaemon(true);
        return t;
    });

    static String elapsed() {
        return String.format("%.1f s", (System.nanoTime() - START) / 1e9);
    }

    static void ok(String what) {
        System.out.println("ok " + what);
        System.out.flush();
    }

    static void fail(String what, String detail) {
        System.out.println("FAIL " + what + ": " + detail);
        System.out.flush();
        failures++;
    }

    static void note(String s) {
        System.out.println("# " + s + " (at " + elapsed() + ")");
        System.out.flush();
    }

    static void check(String what, boolean good, String detail) {
        if (good) {
            ok(what);
        } else {
            fail(what, detail);
        }
    }

    /** A step that cannot fail without making the rest meaningless. */
    static final class Abort extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Abort(String what) {
            super(what);
        }
    }

    /** Runs a blocking client call with the WAIT_S bound; any exception aborts. */
    static <T> T call(String what, Callable<T> c) {
        Future<T> f = CALLS.submit(c);
        try {
            return f.get(WAIT_S, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            fail(what, "no answer within " + WAIT_S + " s");
        } catch (java.util.concurrent.ExecutionException e) {
            fail(what, String.valueOf(e.getCause()));
        } catch (InterruptedException e) {
            fail(what, "interrupted");
        }
        throw new Abort(what);
    }

    /** A call that must fail with `want`, within WAIT_S: the exception, or null. */
    static <E extends KeeperException> E refused(String what, Class<E> want, Callable<?> c) {
        Future<?> f = CALLS.submit(c);
        try {
            Object r = f.get(WAIT_S, TimeUnit.SECONDS);
            fail(what, "it succeeded: " + r);
        } catch (TimeoutException e) {
            f.cancel(true);
            fail(what, "no answer within " + WAIT_S + " s");
        } catch (java.util.concurrent.ExecutionException e) {
            if (want.isInstance(e.getCause())) {
                return want.cast(e.getCause());
            }
            fail(what, String.valueOf(e.getCause()));
        } catch (InterruptedException e) {
            fail(what, "interrupted");
        }
        return null;
    }

    static String describe(List<OpResult> rs) {
        if (rs == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder("[");
        for (OpResult r : rs) {
            if (b.length() > 1) {
                b.append(", ");
            }
            b.append(r instanceof OpResult.ErrorResult
                    ? "error " + KeeperException.Code.get(((OpResult.ErrorResult) r).getErr())
                    : r.getClass().getSimpleName());
        }
        return b.append("]").toString();
    }

    static String str(byte[] b) {
        return b == null ? "null" : new String(b, StandardCharsets.UTF_8);
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Every event a watcher received, in order. */
    static final class Events implements Watcher {
        final BlockingQueue<WatchedEvent> q = new LinkedBlockingQueue<>();

        @Override
        public void process(WatchedEvent e) {
            q.add(e);
        }

        /** The next event, or null after WAIT_S. */
        WatchedEvent next() throws InterruptedException {
            return q.poll(WAIT_S, TimeUnit.SECONDS);
        }

        /** The next session event (type None), skipping others; null after WAIT_S. */
        KeeperState nextState() throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            while (true) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                WatchedEvent e = q.poll(left, TimeUnit.NANOSECONDS);
                if (e == null) {
                    return null;
                }
                if (e.getType() == EventType.None) {
                    return e.getState();
                }
            }
        }
    }

    /** A new session, connected (or abort). */
    static ZooKeeper connect(String connect, Events states, String what) throws Exception {
        ZooKeeper zk = new ZooKeeper(connect, SESSION_TIMEOUT_MS, states);
        KeeperState s = states.nextState();
        if (s != KeeperState.SyncConnected) {
            fail(what, "first session event " + s + " (null: none within " + WAIT_S + " s)");
            zk.close();
            throw new Abort(what);
        }
        ok(what + " (session 0x" + Long.toHexString(zk.getSessionId()) + ", negotiated timeout "
                + zk.getSessionTimeout() + " ms, at " + elapsed() + ")");
        return zk;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !(args[1].equals("steps") || args[1].equals("expire"))) {
            System.err.println("usage: ZkSmoke CONNECT_STRING steps|expire");
            System.exit(2);
        }
        String connect = args[0];
        boolean expire = args[1].equals("expire");
        try {
            run(connect, expire);
        } catch (Abort a) {
            System.out.println("# aborted at: " + a.getMessage());
        }
        System.out.println(failures == 0 ? "# all passed" : "# " + failures + " failed");
        System.out.flush();
        // The client's threads are not daemons.
        System.exit(failures == 0 ? 0 : 1);
    }

    static void run(String connect, boolean expire) throws Exception {
        Events states = new Events();
        ZooKeeper zk = connect(connect, states, "connect");
        List<org.apache.zookeeper.data.ACL> open = ZooDefs.Ids.OPEN_ACL_UNSAFE;

        // create
        String made = call("create", () -> zk.create(ROOT, bytes("v0"), open, CreateMode.PERSISTENT));
        check("create " + ROOT, made.equals(ROOT), "returned " + made);
        String twice = "create " + ROOT + " again fails with NodeExists";
        if (refused(twice, KeeperException.NodeExistsException.class,
                () -> zk.create(ROOT, bytes("x"), open, CreateMode.PERSISTENT)) != null) {
            ok(twice);
        }

        // get, with a data watch
        Events dataWatch = new Events();
        Stat st0 = new Stat();
        byte[] got = call("get", () -> zk.getData(ROOT, dataWatch, st0));
        check("get " + ROOT, str(got).equals("v0") && st0.getVersion() == 0,
                "data " + str(got) + " version " + st0.getVersion());

        // set: the watch fires
        Stat st1 = call("set", () -> zk.setData(ROOT, bytes("v1"), 0));
        check("set " + ROOT + " at version 0", st1.getVersion() == 1, "new version " + st1.getVersion());
        WatchedEvent fired = dataWatch.next();
        check("data watch fires", fired != null && fired.getType() == EventType.NodeDataChanged
                && ROOT.equals(fired.getPath()) && fired.getState() == KeeperState.SyncConnected,
                "got " + fired);
        WatchedEvent again = dataWatch.q.poll(300, TimeUnit.MILLISECONDS);
        check("data watch fires once", again == null, "then got " + again);
        byte[] v1 = call("get after set", () -> zk.getData(ROOT, false, null));
        check("get after set", str(v1).equals("v1"), "data " + str(v1));
        String stale = "set at a stale version fails with BadVersion";
        if (refused(stale, KeeperException.BadVersionException.class,
                () -> zk.setData(ROOT, bytes("stale"), 0)) != null) {
            ok(stale);
        }

        // multi: all or nothing
        List<OpResult> rs = call("multi", () -> zk.multi(Arrays.asList(
                Op.check(ROOT, 1),
                Op.create(ROOT + "/a", bytes("a"), open, CreateMode.PERSISTENT),
                Op.setData(ROOT, bytes("v2"), 1))));
        check("multi commits (check, create, set)", rs.size() == 3
                && rs.get(0) instanceof OpResult.CheckResult
                && rs.get(1) instanceof OpResult.CreateResult
                && ((OpResult.CreateResult) rs.get(1)).getPath().equals(ROOT + "/a")
                && rs.get(2) instanceof OpResult.SetDataResult
                && ((OpResult.SetDataResult) rs.get(2)).getStat().getVersion() == 2,
                "results " + describe(rs));
        String badMulti = "multi with a stale check fails with BadVersion";
        KeeperException.BadVersionException e = refused(badMulti, KeeperException.BadVersionException.class,
                () -> zk.multi(Arrays.asList(
                        Op.create(ROOT + "/b", bytes("b"), open, CreateMode.PERSISTENT),
                        Op.check(ROOT, 1),
                        Op.create(ROOT + "/c", bytes("c"), open, CreateMode.PERSISTENT))));
        if (e != null) {
            // Per op, as ZooKeeper reports a failed multi: 0 (OK) for the ops
            // before the failing one, its error, RuntimeInconsistency after.
            List<OpResult> r = e.getResults();
            check(badMulti, r != null && r.size() == 3
                    && r.get(0) instanceof OpResult.ErrorResult
                    && ((OpResult.ErrorResult) r.get(0)).getErr()
                            == KeeperException.Code.OK.intValue()
                    && r.get(1) instanceof OpResult.ErrorResult
                    && ((OpResult.ErrorResult) r.get(1)).getErr() == KeeperException.Code.BADVERSION.intValue()
                    && r.get(2) instanceof OpResult.ErrorResult
                    && ((OpResult.ErrorResult) r.get(2)).getErr()
                            == KeeperException.Code.RUNTIMEINCONSISTENCY.intValue(),
                    "results " + describe(r));
        }
        Stat b = call("exists after failed multi", () -> zk.exists(ROOT + "/b", false));
        Stat c = call("exists after failed multi", () -> zk.exists(ROOT + "/c", false));
        check("a failed multi applies nothing", b == null && c == null, ROOT + "/b " + b + ", /c " + c);

        // sync, then read
        CompletableFuture<Integer> synced = new CompletableFuture<>();
        zk.sync(ROOT, (rc, path, ctx) -> synced.complete(rc), null);
        Integer rc = call("sync", () -> synced.get());
        check("sync " + ROOT, rc == KeeperException.Code.OK.intValue(), "rc " + KeeperException.Code.get(rc));
        byte[] v2 = call("get after sync", () -> zk.getData(ROOT, false, null));
        check("get after sync", str(v2).equals("v2"), "data " + str(v2));

        if (!expire) {
            call("close", () -> {
                zk.close();
                return null;
            });
            ok("close");
            return;
        }

        // The expiry: an ephemeral and a pending watch, then the cut.
        long old = zk.getSessionId();
        call("create ephemeral", () -> zk.create(ROOT + "/eph", bytes("e"), open, CreateMode.EPHEMERAL));
        ok("create ephemeral " + ROOT + "/eph");
        Events pending = new Events();
        call("exists with a watch", () -> zk.exists(ROOT + "/never", pending));
        note("steps done; waiting for the cut");
        KeeperState s1 = states.nextState();
        check("Disconnected when cut off", s1 == KeeperState.Disconnected,
                "session event " + s1 + " (null: none within " + WAIT_S + " s)");
        note("disconnected");
        KeeperState s2 = states.nextState();
        check("Expired on reconnect", s2 == KeeperState.Expired,
                "session event " + s2 + " (null: none within " + WAIT_S + " s)");
        note("expired");
        KeeperState p1 = pending.nextState();
        KeeperState p2 = p1 == KeeperState.Disconnected ? pending.nextState() : p1;
        check("a pending watch gets Expired too", p2 == KeeperState.Expired, "got " + p1 + ", " + p2);
        check("the old handle is closed", !zk.getState().isAlive(), "state " + zk.getState());
        String dead = "an op on the expired handle fails with SessionExpired";
        if (refused(dead, KeeperException.SessionExpiredException.class, () -> zk.exists(ROOT, false)) != null) {
            ok(dead);
        }
        zk.close();

        // A new session reads back what the old one wrote.
        Events states2 = new Events();
        ZooKeeper zk2 = connect(connect, states2, "a new session");
        check("the new session is another", zk2.getSessionId() != old,
                "same id 0x" + Long.toHexString(old));
        Stat st = new Stat();
        byte[] back = call("read back", () -> zk2.getData(ROOT, false, st));
        check("read back " + ROOT, str(back).equals("v2") && st.getVersion() == 2,
                "data " + str(back) + " version " + st.getVersion());
        Stat a = call("read back child", () -> zk2.exists(ROOT + "/a", false));
        check("read back " + ROOT + "/a", a != null, "missing");
        Stat eph = call("ephemeral gone", () -> zk2.exists(ROOT + "/eph", false));
        check("the expired session's ephemeral is gone", eph == null,
                "still there, owner 0x" + (eph == null ? "" : Long.toHexString(eph.getEphemeralOwner())));
        call("close", () -> {
            zk2.close();
            return null;
        });
        ok("close");
    }
}
