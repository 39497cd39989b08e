package serverbench.jvm;

/** Facts about the JVM the record reports. */
public final class Sys {
    private Sys() {}

    /** Runtime.maxMemory, or null when the JVM has no limit. */
    public static Long maxHeapBytes() {
        long m = Runtime.getRuntime().maxMemory();
        return (m == Long.MAX_VALUE || m <= 0) ? null : m;
    }

    /** VmRSS from /proc/self/status in bytes; null where there is no such file (not Linux). */
    public static Long rssBytes() {
        try {
            for (String l : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/status"))) {
                if (l.startsWith("VmRSS:")) {
                    String[] f = l.substring(6).trim().split("\\s+");
                    return Long.parseLong(f[0]) * (f.length > 1 && f[1].equalsIgnoreCase("kB") ? 1024L : 1L);
                }
            }
            return null;
        } catch (Exception e) {
            return null;
        }
    }

    public static long heapUsedBytes() {
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    /** e.g. "JVM 17.0.15 (OpenJDK 64-Bit Server VM)". */
    public static String jvm() {
        return "JVM " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")";
    }
}
