package dev.taskline.model.problem;

/**
 * A key that would lock the node's administrators out (422): on a node with no key yet, the first
 * one made through the API must be an admin key, since it turns auth on and only an admin key can
 * issue or revoke keys afterwards.
 */
public final class KeyRefusedException extends ProblemException {

    public KeyRefusedException(String message) {
        super(422, "key-refused", "Key refused", message);
    }
}
