package dev.taskline.service;

import java.util.UUID;

/**
 * No such task or batch, as far as the caller may know: one it may not see is answered exactly
 * as one that does not exist, so that ids are no oracle.
 */
public class NotFoundException extends RuntimeException {

  public NotFoundException(String kind, UUID id) {
    super("no " + kind + " " + id, null, false, false);
  }
}
