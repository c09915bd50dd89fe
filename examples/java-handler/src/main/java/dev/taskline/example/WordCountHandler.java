package dev.taskline.example;

import dev.taskline.handler.InvalidPayloadException;
import dev.taskline.handler.TaskContext;
import dev.taskline.handler.TaskHandler;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * {@code word-count}: counts the words of {@code payload.text}, and how many of them are distinct.
 * Small enough to read in one go; it shows the three things a handler does: name its type, refuse
 * a payload it could never run at submission, and answer with a result.
 */
public final class WordCountHandler implements TaskHandler {

  static final int MAX_TEXT = 100_000;

  @Override
  public String type() {
    return "word-count";
  }

  @Override
  public void validate(JsonObject payload) throws InvalidPayloadException {
    Object text = payload == null ? null : payload.getValue("text");
    if (!(text instanceof String s) || s.length() > MAX_TEXT) {
      throw new InvalidPayloadException("text must be a string of at most " + MAX_TEXT + " characters");
    }
  }

  @Override
  public Future<JsonObject> run(TaskContext context) {
    String text = context.payload().getString("text");
    int words = 0;
    Set<String> distinct = new HashSet<>();
    for (String word : text.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}']+")) {
      if (!word.isEmpty()) {
        words++;
        distinct.add(word);
      }
    }
    return Future.succeededFuture(new JsonObject().put("words", words).put("distinct", distinct.size()));
  }
}
