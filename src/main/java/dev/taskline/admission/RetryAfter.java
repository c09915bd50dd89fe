package dev.taskline.admission;

/** How long a refused client should wait before the queue is likely to have room for it. */
public final class RetryAfter {

  static final long MIN_SECONDS = 1;
  static final long MAX_SECONDS = 300;
  /** With no completions in the window there is no rate to go by; a short probe interval is honest. */
  static final long UNKNOWN_RATE_SECONDS = 5;

  private RetryAfter() {
  }

  /**
   * @param excess            places that must free up before the request fits
   * @param completionsPerSec how fast the queue has been finishing tasks lately
   */
  public static long seconds(long excess, double completionsPerSec) {
    if (!(completionsPerSec > 0)) {
      return UNKNOWN_RATE_SECONDS;
    }
    double seconds = Math.ceil(Math.max(1, excess) / completionsPerSec);
    return (long) Math.max(MIN_SECONDS, Math.min(MAX_SECONDS, seconds));
  }
}
