package storbench.s3a;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.GlobalStorageStatistics;
import org.apache.hadoop.fs.StorageStatistics;
import org.apache.hadoop.fs.StorageStatistics.LongStatistic;
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
     * "JVM-NAME name=value ... name.mean=samples:sum ...": the counters of S3AStorageStatistics, and the
     * request durations (ms) S3A's filesystems in this JVM track (only the name before S3A was first used).
     */
    public static String counters() {
        // pid@host and the start time: one JVM, whichever class loader loaded this class
        StringBuilder out = new StringBuilder(ManagementFactory.getRuntimeMXBean().getName())
                .append('/').append(ManagementFactory.getRuntimeMXBean().getStartTime());
        StorageStatistics stats = GlobalStorageStatistics.INSTANCE.get("S3AStorageStatistics");
        if (stats != null) {
            Iterator<LongStatistic> it = stats.getLongStatistics();
            while (it.hasNext()) {
                LongStatistic s = it.next();
                out.append(' ').append(s.getName()).append('=').append(s.getValue());
            }
        }
        Map<String, long[]> means = new TreeMap<>();
        for (FileSystem fs : cachedFileSystems()) {
            IOStatistics io = "s3a".equals(fs.getScheme()) ? IOStatisticsSupport.retrieveIOStatistics(fs) : null;
            if (io == null) {
                continue;
            }
            for (Map.Entry<String, MeanStatistic> e : io.meanStatistics().entrySet()) {
                long[] sum = means.computeIfAbsent(e.getKey(), k -> new long[2]);
                sum[0] += e.getValue().getSamples();
                sum[1] += e.getValue().getSum();
            }
        }
        means.forEach((name, v) -> out.append(' ').append(name).append('=').append(v[0]).append(':').append(v[1]));
        return out.toString();
    }

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
