package dev.taskline.journal;

import io.vertx.sqlclient.Row;
import java.time.Instant;
import java.time.OffsetDateTime;

/** Reading the journal's rows the same way in every class of the package. */
final class Rows {

    private Rows() {}

    /** A timestamptz column as an instant; null for SQL NULL. */
    static Instant instant(Row row, String column) {
        OffsetDateTime time = row.getOffsetDateTime(column);
        return time == null ? null : time.toInstant();
    }
}
