package storbench.jvm.tera;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.Externalizable;
import java.io.IOException;
import java.io.ObjectInput;
import java.io.ObjectOutput;
import java.util.Arrays;

import org.apache.hadoop.io.WritableComparable;

/**
 * One 100-byte record, ordered by its 10-byte key as unsigned bytes (Hadoop Text's order,
 * which TeraSort and TeraValidate use). Externalizable so Spark's shuffle carries it without
 * a Spark dependency here; a bean (getKey/getValue) so a DataFrame can be built from it.
 */
public final class TeraRecord implements WritableComparable<TeraRecord>, Externalizable {
    private static final long serialVersionUID = 1L;
    private byte[] bytes;

    public TeraRecord() {
        this(new byte[TeraRows.RECORD]);
    }

    public TeraRecord(byte[] bytes) {
        this.bytes = bytes;
    }

    public byte[] bytes() {
        return bytes;
    }

    public byte[] getKey() {
        return Arrays.copyOfRange(bytes, 0, TeraRows.KEY);
    }

    public byte[] getValue() {
        return Arrays.copyOfRange(bytes, TeraRows.KEY, TeraRows.RECORD);
    }

    // setters only make the class a bean for Spark's createDataFrame(rdd, beanClass); nothing calls them
    public void setKey(byte[] key) {
        System.arraycopy(key, 0, bytes, 0, TeraRows.KEY);
    }

    public void setValue(byte[] value) {
        System.arraycopy(value, 0, bytes, TeraRows.KEY, TeraRows.RECORD - TeraRows.KEY);
    }

    @Override
    public int compareTo(TeraRecord other) {
        return Arrays.compareUnsigned(bytes, 0, TeraRows.KEY, other.bytes, 0, TeraRows.KEY);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof TeraRecord && Arrays.equals(bytes, ((TeraRecord) other).bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public void write(DataOutput out) throws IOException {
        out.write(bytes);
    }

    @Override
    public void readFields(DataInput in) throws IOException {
        in.readFully(bytes);
    }

    @Override
    public void writeExternal(ObjectOutput out) throws IOException {
        out.write(bytes);
    }

    @Override
    public void readExternal(ObjectInput in) throws IOException {
        bytes = new byte[TeraRows.RECORD];
        in.readFully(bytes);
    }
}
