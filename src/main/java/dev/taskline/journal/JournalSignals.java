package dev.taskline.journal;

import dev.taskline.model.Settled;
import java.util.Collection;
import java.util.UUID;

/**
 * The one port through which the journal calls back up once a write has committed, a method per
 * signal. The wiring implements it and gives it once ({@link Journal#signals}); until then the
 * journal signals {@link #NONE}. Each is called on whatever thread completed the write, and must not
 * block.
 */
public interface JournalSignals {

    JournalSignals NONE = new JournalSignals() {
        @Override
        public void changed(Collection<UUID> ids) {}

        @Override
        public void settled(Settled settled) {}
    };

    /** These tasks got new events (never empty): streams that follow them read them. */
    void changed(Collection<UUID> ids);

    /**
     * What a write that ended flow tasks settled in their flows (children made pending or cancelled,
     * flows ended; never empty).
     */
    void settled(Settled settled);
}
