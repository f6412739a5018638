package storbench.jvm;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.URI;
import java.util.Random;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;

/**
 * TestDFSIO's per-file work, called from Spark tasks through SQL's java_method():
 * one task writes or reads one whole file through the Hadoop FileSystem API, so the
 * same code runs against file://, hdfs:// and s3a://. Each call returns
 * "bytes,nanoseconds" for that file; the driver turns them into TestDFSIO's figures.
 */
public final class DfsIo {
    private DfsIo() {
    }

    /**
     * The file system behind {@code uri}. For file:// it is the raw local file system: Hadoop's
     * default wraps it in a checksumming layer whose CRC work (and .crc side files) would make
     * a local-disk benchmark measure the CPU instead of the device.
     */
    private static FileSystem fileSystem(String uri) throws IOException {
        FileSystem fs = FileSystem.get(URI.create(uri), sparkHadoopConfiguration());
        return fs instanceof LocalFileSystem ? ((LocalFileSystem) fs).getRaw() : fs;
    }

    /**
     * A Hadoop configuration with the task's {@code spark.hadoop.*} settings (S3A's endpoint, credentials
     * provider, signer...), as Spark's own readers get it. A bare {@code new Configuration()} only worked
     * when Spark had already cached a file system for the same bucket in this JVM; otherwise an s3a://
     * task went to AWS's default endpoint. Read by reflection: this jar does not build against Spark.
     */
    static Configuration sparkHadoopConfiguration() {
        Configuration conf = new Configuration();
        try {
            // method handles, not Class.getMethod: that resolves every public method's types, and SparkEnv's
            // mention protobuf classes Spark only has shaded
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            Class<?> envClass = Class.forName("org.apache.spark.SparkEnv");
            Class<?> confClass = Class.forName("org.apache.spark.SparkConf");
            Class<?> pairClass = Class.forName("scala.Tuple2");
            Object env = lookup.findStatic(envClass, "get", MethodType.methodType(envClass)).invoke();
            if (env == null) {
                return conf;  // not inside Spark (a test, a plain JVM)
            }
            Object sparkConf = lookup.findVirtual(envClass, "conf", MethodType.methodType(confClass)).invoke(env);
            Object[] pairs = (Object[]) lookup.findVirtual(confClass, "getAllWithPrefix",
                    MethodType.methodType(pairClass.arrayType(), String.class)).invoke(sparkConf, "spark.hadoop.");
            MethodHandle first = lookup.findVirtual(pairClass, "_1", MethodType.methodType(Object.class));
            MethodHandle second = lookup.findVirtual(pairClass, "_2", MethodType.methodType(Object.class));
            for (Object pair : pairs) {
                conf.set((String) first.invoke(pair), (String) second.invoke(pair));
            }
        } catch (ClassNotFoundException e) {
            return conf;
        } catch (Throwable e) {
            throw new IllegalStateException("reading Spark's spark.hadoop.* settings", e);
        }
        return conf;
    }

    /** Writes {@code bytes} to {@code uri} in {@code bufferSize} chunks; replication 0 keeps the default. */
    public static String write(String uri, long bytes, int bufferSize, int replication) throws IOException {
        FileSystem fs = fileSystem(uri);
        Path path = new Path(uri);
        byte[] buffer = new byte[bufferSize];
        new Random(uri.hashCode()).nextBytes(buffer);  // not trivially compressible, fixed per file
        short factor = replication > 0 ? (short) replication : fs.getDefaultReplication(path);
        long started = System.nanoTime();
        try (OutputStream out = fs.create(path, true, bufferSize, factor, fs.getDefaultBlockSize(path))) {
            long left = bytes;
            while (left > 0) {
                int chunk = (int) Math.min(buffer.length, left);
                out.write(buffer, 0, chunk);
                left -= chunk;
            }
        }
        return bytes + "," + (System.nanoTime() - started);
    }

    /** Reads the whole file at {@code uri} in {@code bufferSize} chunks. */
    public static String read(String uri, int bufferSize) throws IOException {
        FileSystem fs = fileSystem(uri);
        byte[] buffer = new byte[bufferSize];
        long total = 0;
        long started = System.nanoTime();
        try (InputStream in = fs.open(new Path(uri), bufferSize)) {
            int n;
            while ((n = in.read(buffer)) > 0) {
                total += n;
            }
        }
        return total + "," + (System.nanoTime() - started);
    }
}
