package dev.taskline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.ConfigLoader;
import dev.taskline.config.TasklineConfig;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guides as a reader uses them: every {@code sh} block of the README and of {@code docs/*.md}
 * runs, in order, in one bash per file, against a fresh node on the packaged config; every relative
 * link of every Markdown file resolves; and no command of any README or guide holds a placeholder
 * that bash would read as a redirection, hides a failure behind {@code -o /dev/null}, or names a
 * queue the packaged config lacks. A block that cannot run here (it builds the project, starts a node
 * of its own) says so on the line before it: {@code <!-- not run: why -->}.
 */
class DocsTest {

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).toAbsolutePath();

    /** The files whose commands run: the README and every guide. */
    private static final Pattern RUN = Pattern.compile("README\\.md|docs/[^/]+\\.md");

    private static final Pattern FENCE = Pattern.compile("^```\\s*([A-Za-z0-9_+-]*)\\s*$");
    private static final Pattern NOT_RUN = Pattern.compile("^<!-- not run: (.+\\S) -->$");
    private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*]\\(([^)\\s]+)\\)");
    private static final Pattern PLACEHOLDER = Pattern.compile("(?<![<\\w])<[A-Za-z][A-Za-z0-9 _.-]*>");
    private static final List<Pattern> QUEUE_NAMES = List.of(
            Pattern.compile("\"queue\"\\s*:\\s*\"([^\"]+)\""),
            Pattern.compile("/api/queues/([A-Za-z0-9_.-]+)/"),
            Pattern.compile("--queue[ =]([A-Za-z0-9_.-]+)"),
            Pattern.compile("[?&]queue=([A-Za-z0-9_.-]+)"),
            Pattern.compile("\\bqueue=[\"']([A-Za-z0-9_.-]+)[\"']"),
            Pattern.compile("\\bqueue: *'([A-Za-z0-9_.-]+)'"));

    private static final long SCRIPT_TIMEOUT_SECONDS = 240;

    /** A fenced block: where it starts, its language, its text, and why it is not run (null: it is). */
    record Block(Path file, int line, String language, String text, String notRun) {
        String where() {
            return ROOT.relativize(file) + ":" + line;
        }
    }

    // ------------------------------------------------------------------ what every guide must hold to

    @Test
    void every_relative_link_of_every_markdown_file_resolves() throws IOException {
        List<String> broken = new ArrayList<>();
        for (Path file : markdownFiles()) {
            List<String> lines = Files.readAllLines(file);
            boolean inFence = false;
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                if (FENCE.matcher(line).matches()) {
                    inFence = !inFence;
                    continue;
                }
                if (inFence) {
                    continue;
                }
                Matcher link = LINK.matcher(line.replaceAll("`[^`]*`", ""));
                while (link.find()) {
                    String problem = unresolved(file, link.group(1));
                    if (problem != null) {
                        broken.add(ROOT.relativize(file) + ":" + (i + 1) + " " + link.group(1) + ": " + problem);
                    }
                }
            }
        }
        assertTrue(broken.isEmpty(), "links that lead nowhere:\n" + String.join("\n", broken));
    }

    @Test
    void no_command_holds_a_placeholder_or_hides_its_failure_or_names_a_queue_the_config_lacks() throws IOException {
        Set<String> queues = packagedConfig().getJsonObject("queues").fieldNames();
        List<String> faults = new ArrayList<>();
        for (Path file : markdownFiles()) {
            boolean guide = RUN.matcher(ROOT.relativize(file).toString()).matches();
            for (Block block : blocks(file)) {
                if (!block.language().equals("sh")) {
                    continue;
                }
                for (String command : commands(block.text())) {
                    String code = withoutComment(command);
                    Matcher placeholder = PLACEHOLDER.matcher(code);
                    if (placeholder.find()) {
                        faults.add(block.where() + ": " + placeholder.group()
                                + " is a redirection to bash; set a variable on an earlier line");
                    }
                    if (code.contains("-o /dev/null") && !code.contains("-w ")) {
                        faults.add(block.where() + ": -o /dev/null without -w hides the answer: " + code.strip());
                    }
                    if (guide) {
                        for (Pattern name : QUEUE_NAMES) {
                            Matcher queue = name.matcher(code);
                            while (queue.find()) {
                                if (!queues.contains(queue.group(1))) {
                                    faults.add(block.where() + ": queue '" + queue.group(1)
                                            + "' is not in conf/taskline.json");
                                }
                            }
                        }
                    }
                }
            }
        }
        assertTrue(faults.isEmpty(), String.join("\n", faults));
    }

    @Test
    void the_readme_stays_short_and_submits_a_task_early() throws IOException {
        List<String> readme = Files.readAllLines(ROOT.resolve("README.md"));
        assertTrue(readme.size() <= 400, "the README is what a newcomer reads first: " + readme.size() + " lines");
        int submit = -1;
        for (int i = 0; i < readme.size() && submit < 0; i++) {
            if (readme.get(i).contains("POST localhost:8080/api/tasks")) {
                submit = i + 1;
            }
        }
        assertTrue(submit > 0 && submit <= 60, "the tour submits a task within 60 lines, at line " + submit);
    }

    // ------------------------------------------------------------------ the commands, run

    @TestFactory
    Stream<DynamicTest> every_command_of_the_readme_and_the_guides_runs_as_written(@TempDir Path tmp)
            throws IOException {
        List<Path> files = new ArrayList<>();
        files.add(ROOT.resolve("README.md"));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
        }
        // -Ddocs.only=workers runs the files whose name holds that text alone.
        String only = System.getProperty("docs.only", "");
        return files.stream()
                .filter(file -> file.getFileName().toString().contains(only))
                .map(file -> DynamicTest.dynamicTest(
                        ROOT.relativize(file).toString(), () -> runs(file, tmp.resolve(file.getFileName() + ".d"))));
    }

    private static void runs(Path file, Path dir) throws Exception {
        List<Block> run = blocks(file).stream()
                .filter(b -> b.language().equals("sh") && b.notRun() == null)
                .toList();
        if (run.isEmpty()) {
            return;
        }
        for (String tool : List.of("bash", "curl", "python3", "node", "npm")) {
            boolean present = installed(tool);
            if (!present && System.getenv("CI") != null) {
                throw new AssertionError(tool + " is not installed; the guides' commands need it");
            }
            Assumptions.assumeTrue(present, tool + " is not installed here; the guides' commands need it");
        }
        Files.createDirectories(dir);
        int appPort = freePort();
        Vertx vertx = Vertx.vertx();
        Clock clock = Clock.systemUTC();
        JsonObject json = packagedConfig();
        json.getJsonObject("http").put("port", 0);
        TasklineConfig config =
                ConfigLoader.fromJson(json.encode(), Map.of(ConfigLoader.ENV_PG_URL, TestPostgres.newDatabase()));
        Taskline node = TestNode.await(Taskline.start(vertx, config, clock, new TasklineMetrics(clock), null));
        try {
            String address = "127.0.0.1:" + node.httpPort();
            StringBuilder script = new StringBuilder();
            script.append("set -euo pipefail\n");
            script.append("trap 'echo \"*** failed with $?: $BASH_COMMAND\" >&2' ERR\n");
            script.append("trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true' EXIT\n");
            for (Block block : run) {
                script.append("echo '>>> ").append(block.where()).append("'\n");
                script.append(block.text()
                                .replace("http://127.0.0.1:8080", "http://" + address)
                                .replace("localhost:8080", address)
                                .replace("127.0.0.1:8080", address)
                                .replace("localhost:8000", "127.0.0.1:" + appPort)
                                .replace("127.0.0.1:8000", "127.0.0.1:" + appPort))
                        .append('\n');
            }
            Path scriptFile = dir.resolve("guide.sh");
            Files.writeString(scriptFile, script);
            Path log = dir.resolve("guide.log");
            List<String> command = new ArrayList<>();
            boolean ownGroup = installed("setsid");
            if (ownGroup) {
                command.add("setsid"); // its own process group: whatever it leaves running is stopped below
            }
            command.addAll(List.of("bash", scriptFile.toString()));
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(ROOT.toFile()) // the reader's: the repository's root
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            Map<String, String> env = builder.environment();
            env.put("TASKLINE_URL", "http://" + address);
            env.remove("TASKLINE_KEY");
            env.put("PORT", Integer.toString(appPort));
            env.put("PYTHONDONTWRITEBYTECODE", "1");
            Process process = builder.start();
            boolean ended = process.waitFor(SCRIPT_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            if (ownGroup) {
                new ProcessBuilder("kill", "-KILL", "--", "-" + process.pid())
                        .redirectErrorStream(true)
                        .start()
                        .waitFor(10, TimeUnit.SECONDS);
            }
            process.destroyForcibly();
            String output = Files.readString(log, StandardCharsets.UTF_8);
            System.out.println("--- " + ROOT.relativize(file) + "\n" + output);
            assertTrue(ended, ROOT.relativize(file) + " ran past " + SCRIPT_TIMEOUT_SECONDS + " s:\n" + tail(output));
            assertEquals(
                    0,
                    process.exitValue(),
                    ROOT.relativize(file) + ": a command failed (the last block started is named by its '>>>'):\n"
                            + tail(output));
        } finally {
            TestNode.await(node.close());
            TestNode.await(vertx.close());
        }
    }

    // ------------------------------------------------------------------ reading Markdown

    static List<Path> markdownFiles() throws IOException {
        Set<String> skipped = Set.of(".git", "node_modules", "target", "data", "reports", "handlers");
        List<Path> files = new ArrayList<>();
        Files.walkFileTree(ROOT, new java.nio.file.SimpleFileVisitor<>() {
            @Override
            public java.nio.file.FileVisitResult preVisitDirectory(
                    Path dir, java.nio.file.attribute.BasicFileAttributes attrs) {
                return !dir.equals(ROOT) && skipped.contains(dir.getFileName().toString())
                        ? java.nio.file.FileVisitResult.SKIP_SUBTREE
                        : java.nio.file.FileVisitResult.CONTINUE;
            }

            @Override
            public java.nio.file.FileVisitResult visitFile(Path file, java.nio.file.attribute.BasicFileAttributes a) {
                if (file.toString().endsWith(".md")) {
                    files.add(file);
                }
                return java.nio.file.FileVisitResult.CONTINUE;
            }
        });
        files.sort(null);
        return files;
    }

    static List<Block> blocks(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            int start = i;
            StringBuilder text = new StringBuilder();
            for (i++; i < lines.size() && !lines.get(i).strip().equals("```"); i++) {
                text.append(lines.get(i)).append('\n');
            }
            Matcher marker = start > 0 ? NOT_RUN.matcher(lines.get(start - 1).strip()) : null;
            String notRun = marker != null && marker.matches() ? marker.group(1) : null;
            blocks.add(new Block(file, start + 1, open.group(1).toLowerCase(Locale.ROOT), text.toString(), notRun));
        }
        return blocks;
    }

    /** A block's commands, each continued line joined to the one before. */
    static List<String> commands(String text) {
        List<String> commands = new ArrayList<>();
        StringBuilder command = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            if (line.endsWith("\\")) {
                command.append(line, 0, line.length() - 1).append(' ');
            } else {
                commands.add(command.append(line).toString());
                command.setLength(0);
            }
        }
        return commands;
    }

    /** The command without a trailing comment: what follows a '#' at the start or after a space, outside quotes. */
    static String withoutComment(String command) {
        boolean single = false;
        boolean dbl = false;
        for (int i = 0; i < command.length(); i++) {
            char c = command.charAt(i);
            if (c == '\'' && !dbl) {
                single = !single;
            } else if (c == '"' && !single) {
                dbl = !dbl;
            } else if (c == '#' && !single && !dbl && (i == 0 || Character.isWhitespace(command.charAt(i - 1)))) {
                return command.substring(0, i);
            }
        }
        return command;
    }

    /** Why a link leads nowhere, or null when it resolves. */
    static String unresolved(Path from, String target) throws IOException {
        if (target.matches("[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
            return null; // http:, https:, mailto:: not checked here
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path file = path.isEmpty() ? from : from.getParent().resolve(path).normalize();
        if (!Files.exists(file)) {
            return "no such file";
        }
        if (anchor == null) {
            return null;
        }
        if (!file.toString().endsWith(".md")) {
            return "an anchor into a file that is not Markdown";
        }
        return anchors(file).contains(anchor) ? null : "no heading makes #" + anchor;
    }

    /** The anchors GitHub makes of a file's headings: lower case, punctuation dropped, spaces as '-'. */
    static Set<String> anchors(Path file) throws IOException {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean inFence = false;
        for (String line : Files.readAllLines(file)) {
            if (FENCE.matcher(line).matches()) {
                inFence = !inFence;
                continue;
            }
            if (inFence || !line.matches("#{1,6} .*")) {
                continue;
            }
            String slug = line.replaceFirst("^#+ ", "")
                    .strip()
                    .toLowerCase(Locale.ROOT)
                    .replaceAll("[^\\p{L}\\p{N} _-]", "")
                    .replace(' ', '-');
            int n = seen.merge(slug, 1, Integer::sum);
            anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
        }
        return anchors;
    }

    // ------------------------------------------------------------------ helpers

    private static JsonObject packagedConfig() throws IOException {
        return new JsonObject(Files.readString(ROOT.resolve("conf/taskline.json")));
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static boolean installed(String tool) {
        try {
            Process p = new ProcessBuilder("sh", "-c", "command -v " + tool)
                    .redirectErrorStream(true)
                    .start();
            p.getInputStream().readAllBytes();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static String tail(String output) {
        return output.length() <= 6000 ? output : "…" + output.substring(output.length() - 6000);
    }
}
