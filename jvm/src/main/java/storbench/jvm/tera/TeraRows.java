package storbench.jvm.tera;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Hadoop TeraGen's rows (GenSort's format, Jim Gray's sort benchmark): row r is made from
 * the 128-bit linear congruential sequence x(n+1) = A·x(n) + C mod 2^128 started at 0,
 * taking x(r+1). Any row range is reached in at most 128 steps by composing the 2^i-step
 * constants, so every task generates its own range independently.
 *
 * Record layout (100 bytes): the top 10 bytes of x as the key, 00 11, the row number as
 * 32 uppercase hex digits, 88 99 AA BB, 12 hex digits of x (digits 20..31) each repeated
 * 4 times, CC DD EE FF.
 */
public final class TeraRows {
    public static final int RECORD = 100;
    public static final int KEY = 10;

    // GenSort's multiplier and increment (the increment spells "JimGrayRIP" in ASCII)
    private static final long A_HI = 0x2360ed051fc65da4L, A_LO = 0x4385df649fccf645L;
    private static final long C_HI = 0x4a696d4772617952L, C_LO = 0x4950202020202001L;
    // STEP_A[i], STEP_C[i]: the constants of 2^i steps of the sequence, as (hi, lo) pairs
    private static final long[] STEP_A = new long[256], STEP_C = new long[256];

    static {
        long aHi = A_HI, aLo = A_LO, cHi = C_HI, cLo = C_LO;
        for (int i = 0; i < 128; i++) {
            STEP_A[2 * i] = aHi; STEP_A[2 * i + 1] = aLo;
            STEP_C[2 * i] = cHi; STEP_C[2 * i + 1] = cLo;
            // two steps of (a, c): a' = a·a, c' = c·(a + 1)
            long plusLo = aLo + 1, plusHi = aHi + (plusLo == 0 ? 1 : 0);
            long nextCHi = mulHi(cHi, cLo, plusHi, plusLo), nextCLo = cLo * plusLo;
            long nextAHi = mulHi(aHi, aLo, aHi, aLo), nextALo = aLo * aLo;
            aHi = nextAHi; aLo = nextALo; cHi = nextCHi; cLo = nextCLo;
        }
    }

    private TeraRows() {
    }

    /** The high 64 bits of the 128-bit product (x·y mod 2^128). */
    private static long mulHi(long xHi, long xLo, long yHi, long yLo) {
        return unsignedMultiplyHigh(xLo, yLo) + xHi * yLo + xLo * yHi;
    }

    /** Math.unsignedMultiplyHigh, which Java 17 lacks. */
    private static long unsignedMultiplyHigh(long x, long y) {
        return Math.multiplyHigh(x, y) + ((x >> 63) & y) + ((y >> 63) & x);
    }

    /** The sequence's state before row {@code row}: x(row), as {hi, lo}. */
    public static long[] stateAt(long row) {
        long hi = 0, lo = 0;
        for (int i = 0; i < 64; i++) {
            if ((row & (1L << i)) != 0) {
                long aHi = STEP_A[2 * i], aLo = STEP_A[2 * i + 1];
                long nHi = mulHi(hi, lo, aHi, aLo), nLo = lo * aLo;
                long sumLo = nLo + STEP_C[2 * i + 1];
                nHi += STEP_C[2 * i] + (Long.compareUnsigned(sumLo, nLo) < 0 ? 1 : 0);
                hi = nHi; lo = sumLo;
            }
        }
        return new long[] {hi, lo};
    }

    /** Advances {@code state} one step in place. */
    public static void next(long[] state) {
        long hi = mulHi(state[0], state[1], A_HI, A_LO), lo = state[1] * A_LO;
        long sumLo = lo + C_LO;
        state[0] = hi + C_HI + (Long.compareUnsigned(sumLo, lo) < 0 ? 1 : 0);
        state[1] = sumLo;
    }

    private static byte hex(int nibble) {
        return (byte) (nibble < 10 ? '0' + nibble : 'A' + nibble - 10);
    }

    // Whole-word writes into the record (the per-byte loops made generation CPU-bound)
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);
    private static final byte[] TEMPLATE = new byte[RECORD];  // the constant bytes of every record
    private static final long[] HEX_EIGHT = new long[256];  // a byte's two hex digits, each four times

    static {
        TEMPLATE[11] = 0x11;
        for (int i = 12; i < 28; i++) {
            TEMPLATE[i] = '0';  // the row number's high 64 bits are 0 for any long row
        }
        byte[] fixed = {(byte) 0x88, (byte) 0x99, (byte) 0xAA, (byte) 0xBB};
        System.arraycopy(fixed, 0, TEMPLATE, 44, 4);
        byte[] end = {(byte) 0xCC, (byte) 0xDD, (byte) 0xEE, (byte) 0xFF};
        System.arraycopy(end, 0, TEMPLATE, 96, 4);
        for (int b = 0; b < 256; b++) {
            HEX_EIGHT[b] = (hex(b >>> 4) & 0xffL) * 0x0101010100000000L | (hex(b & 0xf) & 0xffL) * 0x01010101L;
        }
    }

    /** Writes row {@code row}, whose random value is {@code state} (already advanced), at {@code out[at..at+100)}. */
    public static void record(byte[] out, int at, long[] state, long row) {
        System.arraycopy(TEMPLATE, 0, out, at, RECORD);
        variable(out, at, state, row);
    }

    /**
     * Writes {@code count} consecutive rows from {@code row} at {@code out[0..count*100)}, advancing
     * {@code state}; {@code templated}: {@code out} already holds the constant bytes of every record
     * (a block buffer reused from an earlier call), so only the bytes that vary are written.
     */
    public static void block(byte[] out, int count, long[] state, long row, boolean templated) {
        for (int i = 0, at = 0; i < count; i++, at += RECORD) {
            next(state);
            if (!templated) {
                System.arraycopy(TEMPLATE, 0, out, at, RECORD);
            }
            variable(out, at, state, row + i);
        }
    }

    /** The bytes of a record that differ from row to row: the key, the row number, the hex digits of x. */
    private static void variable(byte[] out, int at, long[] state, long row) {
        long hi = state[0], lo = state[1];
        LONG.set(out, at, hi);  // the key: the top 10 bytes of x
        SHORT.set(out, at + 8, (short) (lo >>> 48));
        LONG.set(out, at + 28, hexDigits((int) (row >>> 32)));  // the row number's low 64 bits: 16 hex digits
        LONG.set(out, at + 36, hexDigits((int) row));
        for (int i = 0; i < 6; i++) {  // hex digits 20..31 of x (the low 48 bits of lo), each four times
            LONG.set(out, at + 48 + 8 * i, HEX_EIGHT[(int) (lo >>> (40 - 8 * i)) & 0xff]);
        }
    }

    /** The 8 hex digits of {@code v} (uppercase, most significant first) as the bytes of a big-endian long. */
    static long hexDigits(int v) {
        long x = v & 0xffffffffL;  // spread the 8 nibbles to one byte each, in order
        x = (x | x << 16) & 0x0000ffff0000ffffL;
        x = (x | x << 8) & 0x00ff00ff00ff00ffL;
        x = (x | x << 4) & 0x0f0f0f0f0f0f0f0fL;
        long letters = ((x + 0x0606060606060606L) & 0x1010101010101010L) >>> 4;  // 1 in each byte ≥ 10
        return x + 0x3030303030303030L + letters * 7;  // '0' + d, and 'A' - '0' - 10 = 7 more for a letter
    }
}
