package dev.taskline.load;

/** Plain values out of Prometheus text (the server's GET /metrics). */
final class PrometheusText {

  private PrometheusText() {
  }

  /**
   * The sum of every sample of {@code name} whose labels contain {@code label} (any when null), or
   * null when there is none: a server without the series gives no figure rather than a zero.
   */
  static Double sum(String text, String name, String label) {
    Double total = null;
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
        double value = Double.parseDouble(valueAndMore[0]);
        // A gauge with no figure reads NaN: no figure here either, rather than a poisoned sum.
        if (Double.isFinite(value)) {
          total = total == null ? value : total + value;
        }
      } catch (NumberFormatException e) {
        // Not a sample line of this series (a longer name that starts the same way is skipped above).
      }
    }
    return total;
  }
}
