package storbench.jvm.tera;

import java.util.Arrays;

import org.apache.hadoop.mapreduce.RecordReader;

/**
 * What the two tera readers share: a (10-byte key, 90-byte value) pair per record, cut from a
 * record buffer into fresh arrays (Spark may keep the ones it was given), and progress as a
 * position between two bounds.
 */
abstract class TeraPairReader extends RecordReader<byte[], byte[]> {
    protected final byte[] record = new byte[TeraRows.RECORD];
    protected byte[] key;
    protected byte[] value;

    /** Sets key and value from {@link #record}. */
    protected final void splitRecord() {
        key = Arrays.copyOfRange(record, 0, TeraRows.KEY);
        value = Arrays.copyOfRange(record, TeraRows.KEY, TeraRows.RECORD);
    }

    protected static float progress(long at, long from, long to) {
        return to == from ? 1f : (at - from) / (float) (to - from);
    }

    @Override
    public byte[] getCurrentKey() {
        return key;
    }

    @Override
    public byte[] getCurrentValue() {
        return value;
    }
}
