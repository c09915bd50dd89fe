package dev.taskline.load;

import java.util.ArrayList;
import java.util.List;

/** Samples out of Prometheus text (the server's GET /metrics). */
final class PrometheusText {

  /** One sample line: its labels as written (with the braces; empty when none) and its value. */
  record Sample(String labels, double value) {

    /** The value of label {@code key}, or null when the sample has no such label. */
    String label(String key) {
      int at = labels.indexOf("{" + key + "=\"");
      at = at >= 0 ? at : labels.indexOf("," + key + "=\"");
      if (at < 0) {
        return null;
      }
      int start = at + key.length() + 3;
      int end = labels.indexOf('"', start);
      return end < 0 ? null : labels.substring(start, end);
    }
  }

  private PrometheusText() {
  }

  /**
   * Every sample of exactly {@code name} (not a longer name that starts the same way) whose labels
   * hold the whole pair {@code label}, e.g. {@code queue="bench"} (any when null).
   */
  static List<Sample> samples(String text, String name, String label) {
    List<Sample> found = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (!line.startsWith(name) || line.length() == name.length()) {
        continue;
      }
      char next = line.charAt(name.length());
      int labelsEnd = next == '{' ? line.lastIndexOf('}') : name.length() - 1;
      if ((next != '{' && !Character.isWhitespace(next)) || labelsEnd < 0) {
        continue;
      }
      // A whole label pair: after "{" or ",", so that area="heap" does not match xarea="heap".
      String labels = line.substring(name.length(), labelsEnd + 1);
      if (label != null && !labels.contains("{" + label) && !labels.contains("," + label)) {
        continue;
      }
      String[] valueAndMore = line.substring(labelsEnd + 1).trim().split("\\s+");
      try {
        found.add(new Sample(labels, Double.parseDouble(valueAndMore[0])));
      } catch (NumberFormatException e) {
        // Not a sample line.
      }
    }
    return found;
  }

  /**
   * The sum of the samples that {@link #samples} finds, or null when there is none: a server without
   * the series gives no figure rather than a zero. A gauge with no figure reads NaN, and counts as
   * none rather than poisoning the sum.
   */
  static Double sum(String text, String name, String label) {
    Double total = null;
    for (Sample sample : samples(text, name, label)) {
      if (Double.isFinite(sample.value())) {
        total = total == null ? sample.value() : total + sample.value();
      }
    }
    return total;
  }
}
