package storbench.jvm.tera;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.RecordWriter;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;

/**
 * Hadoop's 100-byte record files (TeraOutputFormat's format): each record's key then value, nothing
 * between (a block of whole records from TeraGenInputFormat arrives as the key, with an empty value).
 */
public final class TeraFileOutputFormat extends FileOutputFormat<byte[], byte[]> {
    @Override
    public RecordWriter<byte[], byte[]> getRecordWriter(TaskAttemptContext context) throws IOException {
        Path file = getDefaultWorkFile(context, "");
        // buffered: two small writes per record would each pass through the checksum layer; a block of
        // records (1 MB) is larger than the buffer, so it goes to the file in one write, not copied first
        OutputStream out = new BufferedOutputStream(file.getFileSystem(context.getConfiguration()).create(file, false),
                                                    1 << 16);
        return new RecordWriter<byte[], byte[]>() {
            @Override
            public void write(byte[] key, byte[] value) throws IOException {
                out.write(key);
                out.write(value);
            }

            @Override
            public void close(TaskAttemptContext c) throws IOException {
                out.close();
            }
        };
    }
}
