package storbench.jvm;

import java.io.File;
import java.io.IOException;
import java.net.URI;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * One local file onto a Hadoop file system (hdfs://, s3a://) from inside a Spark task, called through SQL's
 * java_method(): a task that wrote its share on the executor's own disk puts it on the target through the
 * executor's Hadoop client, so no host copies the others' files (TPC-DS generation on every node).
 */
public final class PutFile {
    private PutFile() {
    }

    /**
     * Copies {@code local} to {@code uri} (replacing a file a failed attempt left), deletes {@code local}, then
     * the folders it leaves empty up to and including {@code root}; returns the bytes put.
     */
    public static long put(String local, String uri, String root) throws IOException {
        FileSystem fs = FileSystem.get(URI.create(uri), DfsIo.sparkHadoopConfiguration());
        File source = new File(local);
        long bytes = source.length();
        fs.copyFromLocalFile(true, true, new Path(source.toURI()), new Path(uri));
        File stop = new File(root).getAbsoluteFile();
        for (File dir = source.getAbsoluteFile().getParentFile(); dir != null; dir = dir.getParentFile()) {
            String[] left = dir.list();
            if (left == null || left.length > 0 || !dir.delete() || dir.equals(stop)) {
                break;  // not empty (another file still to put), or the task's own folder is gone
            }
        }
        return bytes;
    }
}
