package dev.taskline.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ResidentMemoryTest {

    @Test
    void readsVmRssInBytes() {
        String status = "Name:\tjava\nVmPeak:\t 9000000 kB\nVmRSS:\t  312456 kB\nRssAnon:\t  290000 kB\n";
        assertEquals(312456 * 1024.0, ResidentMemory.parse(status));
    }

    @Test
    void noFigureWithoutTheLineOrItsUnit() {
        assertTrue(Double.isNaN(ResidentMemory.parse("Name:\tjava\nVmPeak:\t 9000000 kB\n")));
        assertTrue(Double.isNaN(ResidentMemory.parse("VmRSS:\t 312456 MB\n")));
    }

    @Test
    void readsThisProcessWhereTheKernelHasTheFile() {
        if (Files.isReadable(Path.of("/proc/self/status"))) {
            assertTrue(ResidentMemory.read() > 1024 * 1024, "a JVM holds more than 1 MB");
        } else {
            assertTrue(Double.isNaN(ResidentMemory.read()));
        }
    }
}
