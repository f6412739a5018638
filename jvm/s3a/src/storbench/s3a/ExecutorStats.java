package storbench.s3a;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSupport;
import org.apache.hadoop.fs.statistics.MeanStatistic;

/**
 * S3A's JVM-wide request counters of the JVM this runs in, for Spark SQL's {@code java_method}: a task
 * calls it on each executor, so the driver can add up the requests its executors made (issue 15).
 */
public final class ExecutorStats {
    private ExecutorStats() {}

    /**
     * "JVM-NAME name=value ... name.mean=samples:sum ...": the counters and the request durations (ms) of
     * S3A's filesystems in this JVM, summed.
     */
    public static String counters() {
        // pid@host and the start time: one JVM, whichever class loader loaded this class
        StringBuilder out = new StringBuilder(ManagementFactory.getRuntimeMXBean().getName())
                .append('/').append(ManagementFactory.getRuntimeMXBean().getStartTime());
        Map<String, Long> counters = new TreeMap<>();
        Map<String, long[]> means = new TreeMap<>();
        for (IOStatistics io : s3aStatistics()) {
            io.counters().forEach((name, value) -> counters.merge(name, value, Long::sum));
            for (Map.Entry<String, MeanStatistic> e : io.meanStatistics().entrySet()) {
                long[] sum = means.computeIfAbsent(e.getKey(), k -> new long[2]);
                sum[0] += e.getValue().getSamples();
                sum[1] += e.getValue().getSum();
            }
        }
        counters.forEach((name, value) -> out.append(' ').append(name).append('=').append(value));
        means.forEach((name, v) -> out.append(' ').append(name).append('=').append(v[0]).append(':').append(v[1]));
        return out.toString();
    }

    /**
     * The statistics of every S3A filesystem this JVM has cached so far, kept after it leaves the cache so
     * that the sums only grow. Not GlobalStorageStatistics' "S3AStorageStatistics": that one is the first S3A
     * filesystem's, and reads nothing more once a later one does the work (with catalog=hive every S3A
     * counter of a run read 0 through it).
     */
    private static synchronized List<IOStatistics> s3aStatistics() {
        for (FileSystem fs : cachedFileSystems()) {
            IOStatistics io = "s3a".equals(fs.getScheme()) ? IOStatisticsSupport.retrieveIOStatistics(fs) : null;
            if (io != null) {
                SEEN.add(io);
            }
        }
        return new ArrayList<>(SEEN);
    }

    private static final Set<IOStatistics> SEEN = Collections.newSetFromMap(new IdentityHashMap<>());

    /** The filesystems of FileSystem's cache (a private field: none when this Hadoop names it otherwise). */
    @SuppressWarnings("unchecked")
    private static List<FileSystem> cachedFileSystems() {
        try {
            Field cacheField = FileSystem.class.getDeclaredField("CACHE");
            cacheField.setAccessible(true);
            Object cache = cacheField.get(null);
            Field mapField = cache.getClass().getDeclaredField("map");
            mapField.setAccessible(true);
            synchronized (cache) {  // the cache's own methods hold its lock
                return new ArrayList<>(((Map<?, FileSystem>) mapField.get(cache)).values());
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            return new ArrayList<>();
        }
    }
}
