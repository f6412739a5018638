package storbench.jvm.tera;

import java.io.IOException;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.RecordReader;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.input.FileSplit;

/**
 * Hadoop's 100-byte record files (TeraInputFormat's format): a split owns the records that
 * start inside it, so split boundaries need not fall on records. Each record is a fresh
 * (10-byte key, 90-byte value) pair.
 */
public final class TeraFileInputFormat extends FileInputFormat<byte[], byte[]> {
    private static final int BUFFER = 1 << 20;

    @Override
    public RecordReader<byte[], byte[]> createRecordReader(InputSplit split, TaskAttemptContext context) {
        return new TeraPairReader() {
            private FSDataInputStream in;
            private long offset;
            private long end;
            private long start;

            @Override
            public void initialize(InputSplit s, TaskAttemptContext c) throws IOException {
                FileSplit file = (FileSplit) s;
                Path path = file.getPath();
                start = ceilRecord(file.getStart());
                end = ceilRecord(file.getStart() + file.getLength());
                offset = start;
                in = path.getFileSystem(c.getConfiguration()).open(path, BUFFER);
                in.seek(start);
            }

            private long ceilRecord(long position) {
                return (position + TeraRows.RECORD - 1) / TeraRows.RECORD * TeraRows.RECORD;
            }

            @Override
            public boolean nextKeyValue() throws IOException {
                if (offset >= end) {
                    return false;
                }
                int read = in.read(record, 0, TeraRows.RECORD);
                if (read <= 0) {
                    return false;
                }
                if (read < TeraRows.RECORD) {
                    in.readFully(record, read, TeraRows.RECORD - read);
                }
                offset += TeraRows.RECORD;
                splitRecord();
                return true;
            }

            @Override
            public float getProgress() {
                return progress(offset, start, end);
            }

            @Override
            public void close() throws IOException {
                if (in != null) {
                    in.close();
                }
            }
        };
    }
}
