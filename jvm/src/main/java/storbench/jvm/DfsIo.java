package storbench.jvm;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
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
        FileSystem fs = FileSystem.get(URI.create(uri), new Configuration());
        return fs instanceof LocalFileSystem ? ((LocalFileSystem) fs).getRaw() : fs;
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
