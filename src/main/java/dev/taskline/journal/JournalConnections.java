package dev.taskline.journal;

import io.vertx.pgclient.PgConnectOptions;

/** How the node connects to its journal: one place, so that tests see the planner the node sees. */
public final class JournalConnections {

  private JournalConnections() {
  }

  public static PgConnectOptions options(String url) {
    return PgUrl.parse(url)
        .setPipeliningLimit(256)
        // Parsing the grouped array statements each time cost milliseconds (their CTEs are not
        // small), so they are prepared once per connection. A generic plan, though, is made once
        // from the statistics of the moment (an empty table on a new journal) and kept: measured,
        // claims went from 20 to 150 ms. Custom plans see the actual array lengths and table size.
        .setCachePreparedStatements(true)
        .setPreparedStatementCacheMaxSize(128)
        .addProperty("plan_cache_mode", "force_custom_plan")
        // The journal's working set lives in shared buffers; a random page read costs about what a
        // sequential one does. The default (4) priced a few hundred primary-key lookups above a
        // hash join over a whole table of tens of thousands of tasks.
        .addProperty("random_page_cost", "1.1");
  }
}
