package serverbench.jvm;

/** Facts about the JVM the record reports. */
public final class Sys {
    private Sys() {}

    /** Runtime.maxMemory, or null when the JVM has no limit. */
    public static Long maxHeapBytes() {
        long m = Runtime.getRuntime().maxMemory();
        return (m == Long.MAX_VALUE || m <= 0) ? null : m;
    }

    /** e.g. "JVM 17.0.15 (OpenJDK 64-Bit Server VM)". */
    public static String jvm() {
        return "JVM " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")";
    }
}
