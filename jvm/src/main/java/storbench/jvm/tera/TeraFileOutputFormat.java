package storbench.jvm.tera;

import java.io.IOException;

import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.RecordWriter;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;

/** Hadoop's 100-byte record files (TeraOutputFormat's format): each record's bytes, nothing between. */
public final class TeraFileOutputFormat extends FileOutputFormat<TeraRecord, Object> {
    @Override
    public RecordWriter<TeraRecord, Object> getRecordWriter(TaskAttemptContext context) throws IOException {
        Path file = getDefaultWorkFile(context, "");
        FSDataOutputStream out = file.getFileSystem(context.getConfiguration()).create(file, false);
        return new RecordWriter<TeraRecord, Object>() {
            @Override
            public void write(TeraRecord record, Object ignored) throws IOException {
                out.write(record.bytes(), 0, TeraRows.RECORD);
            }

            @Override
            public void close(TaskAttemptContext c) throws IOException {
                out.close();
            }
        };
    }
}
