package dev.taskline.events;

import dev.taskline.journal.JournalReads;
import dev.taskline.model.Progress;
import dev.taskline.model.problem.ShareExceededException;
import dev.taskline.model.problem.TooManyStreamsException;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The node's open streams, and the routing of news to them: journal writes on this node poke the
 * streams of the tasks they touched at once; a periodic {@link #catchUp} asks the journal which
 * watched tasks changed anyway (other nodes' writes) and pokes those, and reads the progress of
 * watched running tasks. Progress of local tasks goes straight from the worker to the streams.
 */
public final class EventHub {

    private final Vertx vertx;
    private final JournalReads journal;
    private final int maxStreams;
    private final Map<UUID, Set<TaskStream>> byTask = new ConcurrentHashMap<>();
    private final AtomicInteger open = new AtomicInteger();
    /** Open streams per holder that has a share (a tenant, a stream token). */
    private final Map<String, Integer> byHolder = new ConcurrentHashMap<>();

    static final long LOOK_BACK_MS = 4_000;
    private final Followers followers;
    /** Event-id watermarks read by the passes, each with its time ({@link System#nanoTime}); guarded by itself. */
    private final Deque<long[]> marks = new ArrayDeque<>();

    public EventHub(Vertx vertx, JournalReads journal, int maxStreams, Followers followers) {
        this.vertx = vertx;
        this.journal = journal;
        this.maxStreams = maxStreams;
        this.followers = followers;
    }

    /**
     * Who holds a stream, and how many it may hold at once (a tenant its share of the node's, a
     * stream token one).
     */
    public record Holder(String name, int most, String what) {}

    /**
     * Opens a stream on the caller's event loop, into the sink {@code sinks} makes once the stream
     * has its place. Refused, and no sink made, when this node already serves its maximum ({@link
     * TooManyStreamsException}) or one of {@code holders} (none: a stream held to no share) holds its
     * most ({@link ShareExceededException}): a stream counts for each of them (a stream token's for
     * the token and for its tenant).
     */
    public TaskStream open(
            Collection<UUID> tasks, long afterEventId, Supplier<StreamSink> sinks, List<Holder> holders) {
        for (int i = 0; i < holders.size(); i++) {
            Holder holder = holders.get(i);
            int held = byHolder.merge(holder.name(), 1, Integer::sum);
            if (held > holder.most()) {
                release(holders.subList(0, i + 1));
                throw new ShareExceededException(
                        holder.what() + " holds " + holder.most() + " of this node's streams,"
                                + " its most at once; close one, or try again later",
                        holder.most());
            }
        }
        if (open.incrementAndGet() > maxStreams) {
            open.decrementAndGet();
            release(holders);
            throw new TooManyStreamsException(maxStreams);
        }
        StreamSink sink;
        try {
            sink = sinks.get();
        } catch (RuntimeException e) {
            open.decrementAndGet();
            release(holders);
            throw e;
        }
        Context context = vertx.getOrCreateContext();
        TaskStream[] streamOf = new TaskStream[1];
        TaskStream stream = new TaskStream(vertx, context, journal, new HashSet<>(tasks), afterEventId, sink, () -> {
            forget(streamOf[0]);
            release(holders);
        });
        streamOf[0] = stream;
        boolean first = byTask.isEmpty();
        for (UUID task : stream.tasks()) {
            byTask.computeIfAbsent(task, t -> new CopyOnWriteArraySet<>()).add(stream);
        }
        if (first) {
            // What the others journaled before they were told was never announced: read it once they are.
            followers.following().onComplete(told -> catchUp());
        }
        stream.start();
        return stream;
    }

    private void release(List<Holder> holders) {
        for (Holder holder : holders) {
            byHolder.computeIfPresent(holder.name(), (name, n) -> n == 1 ? null : n - 1);
        }
    }

    public int openStreams() {
        return open.get();
    }

    /** The journal committed events for these tasks. */
    public void changed(Collection<UUID> tasks) {
        if (byTask.isEmpty()) {
            return;
        }
        Set<TaskStream> poked = new HashSet<>();
        for (UUID task : tasks) {
            Set<TaskStream> streams = byTask.get(task);
            if (streams != null) {
                poked.addAll(streams);
            }
        }
        poked.forEach(TaskStream::poke);
    }

    public void progress(UUID task, int percent, String message) {
        Set<TaskStream> streams = byTask.get(task);
        if (streams != null) {
            for (TaskStream stream : streams) {
                stream.progress(task, percent, message);
            }
        }
    }

    /**
     * One pass of the nudge for writes made elsewhere: which watched tasks have events newer than the
     * newest event id seen {@value #LOOK_BACK_MS} ms ago or more (generous: an id is handed out before
     * its transaction commits, and a pass may run just after another when a notification asks for
     * it); their streams read the journal, and drop what they have shown.
     */
    public Future<Integer> catchUp() {
        if (byTask.isEmpty()) {
            return journal.maxEventId().map(max -> {
                mark(max);
                return 0;
            });
        }
        List<UUID> watched = new ArrayList<>(byTask.keySet());
        long since = since();
        return journal.maxEventId()
                .compose(max -> journal.changedSince(watched, since).map(changed -> {
                    mark(max);
                    changed(changed);
                    return changed.size();
                }))
                .compose(changed -> journal.runningProgress(watched).map(reports -> {
                    // Progress of tasks running on other nodes reaches us only through the journal; streams
                    // drop what they have already shown, so local progress is not repeated.
                    for (Progress report : reports) {
                        progress(report.taskId(), report.percent(), report.message());
                    }
                    return changed;
                }));
    }

    private void mark(long watermark) {
        long now = System.nanoTime();
        synchronized (marks) {
            marks.addLast(new long[] {now, watermark});
            // The oldest mark kept is the newest one old enough to read from.
            while (marks.size() > 1 && oldEnough(now, second())) {
                marks.removeFirst();
            }
        }
    }

    private long[] second() {
        Iterator<long[]> it = marks.iterator();
        it.next();
        return it.next();
    }

    private long since() {
        long now = System.nanoTime();
        synchronized (marks) {
            long[] first = marks.peekFirst();
            return first != null && oldEnough(now, first) ? first[1] : 0;
        }
    }

    private static boolean oldEnough(long nowNanos, long[] mark) {
        return (nowNanos - mark[0]) / 1_000_000 >= LOOK_BACK_MS;
    }

    private void forget(TaskStream stream) {
        open.decrementAndGet();
        for (UUID task : stream.tasks()) {
            byTask.computeIfPresent(task, (t, streams) -> {
                streams.remove(stream);
                return streams.isEmpty() ? null : streams;
            });
        }
    }
}
