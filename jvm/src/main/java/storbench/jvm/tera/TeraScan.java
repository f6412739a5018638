package storbench.jvm.tera;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.util.Arrays;
import java.util.zip.CRC32;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * TeraValidate's per-file pass, called from a Spark task through SQL's java_method() (one
 * task per file): the record count, first and last key, the offset of the first record
 * whose key is smaller than the one before it (-1 if none), and the sum of every record's
 * CRC32 (TeraValidate's checksum, order-independent). Returns
 * "records,firstKeyHex,lastKeyHex,misorderOffset,checksum" (checksum in decimal).
 */
public final class TeraScan {
    private TeraScan() {
    }

    private static String hex(byte[] key) {
        StringBuilder text = new StringBuilder();
        for (byte b : key) {
            text.append(String.format("%02x", b & 0xff));
        }
        return text.toString();
    }

    public static String scan(String uri) throws IOException {
        FileSystem fs = FileSystem.get(URI.create(uri), new Configuration());
        byte[] buffer = new byte[TeraRows.RECORD * 10_000];
        byte[] first = null;
        byte[] last = new byte[TeraRows.KEY];
        long records = 0;
        long misorder = -1;
        long checksum = 0;  // < 2^32 per record: no overflow below 2^32 records per file
        CRC32 crc = new CRC32();
        try (InputStream in = fs.open(new Path(uri), 1 << 20)) {
            while (true) {
                int filled = 0;
                while (filled < buffer.length) {
                    int n = in.read(buffer, filled, buffer.length - filled);
                    if (n < 0) {
                        break;
                    }
                    filled += n;
                }
                if (filled % TeraRows.RECORD != 0) {
                    throw new EOFException(uri + ": " + (records * TeraRows.RECORD + filled)
                                           + " bytes is not a whole number of 100-byte records");
                }
                for (int at = 0; at < filled; at += TeraRows.RECORD) {
                    if (first == null) {
                        first = Arrays.copyOfRange(buffer, at, at + TeraRows.KEY);
                    } else if (misorder < 0 && Arrays.compareUnsigned(buffer, at, at + TeraRows.KEY,
                                                                     last, 0, TeraRows.KEY) < 0) {
                        misorder = records * TeraRows.RECORD;
                    }
                    System.arraycopy(buffer, at, last, 0, TeraRows.KEY);
                    crc.reset();
                    crc.update(buffer, at, TeraRows.RECORD);
                    checksum += crc.getValue();
                    records++;
                }
                if (filled < buffer.length) {
                    break;
                }
            }
        }
        return records + "," + (first == null ? "" : hex(first)) + "," + (first == null ? "" : hex(last)) + ","
               + misorder + "," + Long.toUnsignedString(checksum);
    }
}
