package dev.taskline.metrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The process's resident set size as the kernel counts it. Linux only: elsewhere there is no
 * {@code /proc/self/status} and no figure (NaN, which a scrape shows as such). The file lives in
 * memory, so reading it never waits on a disk; it is still read off the event loop, at scrape time.
 */
final class ResidentMemory {

    private static final Path STATUS = Path.of("/proc/self/status");

    private ResidentMemory() {}

    /** Bytes, or NaN when the figure cannot be read. */
    static double read() {
        try {
            return parse(Files.readString(STATUS));
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** The {@code VmRSS:} line of a status file, in bytes (the kernel writes kB); NaN when absent. */
    static double parse(String status) {
        for (String line : status.split("\n")) {
            if (line.startsWith("VmRSS:")) {
                String[] parts = line.substring("VmRSS:".length()).trim().split("\\s+");
                if (parts.length == 2 && parts[1].equals("kB")) {
                    return Long.parseLong(parts[0]) * 1024.0;
                }
            }
        }
        return Double.NaN;
    }
}
