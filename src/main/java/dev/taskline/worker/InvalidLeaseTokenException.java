package dev.taskline.worker;

/** A lease token that is not one this journal's nodes signed: garbled, cut, or made up. Nothing changed. */
public class InvalidLeaseTokenException extends RuntimeException {

    public InvalidLeaseTokenException(String message) {
        super(message, null, false, false);
    }
}
