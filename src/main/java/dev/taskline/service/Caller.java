package dev.taskline.service;

/**
 * Who asks the service for something. Every operation takes one, so that who may do what, and as
 * which tenant, is decided in {@link TaskService} once for every way in (HTTP, streams, the
 * dashboard). Today every caller is {@link #ANONYMOUS}: it may act as whichever tenant it names
 * and sees every task.
 */
public record Caller(String name) {

  public static final Caller ANONYMOUS = new Caller("anonymous");

  /** The tenant a request of this caller acts for, given the one it names (null: none). */
  String tenantFor(String named) {
    return named;
  }

  /** Whether this caller may see (and act on) a task of {@code tenant} (null: a task without one). */
  boolean sees(String tenant) {
    return seesEveryTenant();
  }

  /** True when no task is hidden from this caller, so that no tenant needs to be looked up first. */
  boolean seesEveryTenant() {
    return true;
  }
}
