package storbench.ycsb;

import java.lang.reflect.Field;
import java.util.Map;
import org.HdrHistogram.Histogram;
import site.ycsb.Client;
import site.ycsb.measurements.Measurements;
import site.ycsb.measurements.OneMeasurement;
import site.ycsb.measurements.OneMeasurementHdrHistogram;

/**
 * YCSB's own {@code site.ycsb.Client}, unchanged, plus one thing it does not print: the latency of all the
 * run's operations together. YCSB reports percentiles per operation type only, and percentiles do not add
 * up, so when the client exits (Client.main ends in System.exit) this merges the HdrHistograms YCSB kept
 * (measurementtype=hdrhistogram) of the operation types named by {@code -Dstorbench.overall=READ,UPDATE} and
 * prints to stderr (YCSB closes stdout after its export):
 * {@code [STORBENCH-OVERALL], Operations|AverageLatency(us)|MaxLatency(us)|95thPercentileLatency(us)|..., v}.
 */
public final class YcsbRun {
  private YcsbRun() {
  }

  public static void main(String[] args) {
    String ops = System.getProperty("storbench.overall", "");
    Runtime.getRuntime().addShutdownHook(new Thread(() -> printOverall(ops)));
    Client.main(args);
  }

  @SuppressWarnings("unchecked")
  private static void printOverall(String ops) {
    try {
      Field byOp = Measurements.class.getDeclaredField("opToMesurementMap");
      Field total = OneMeasurementHdrHistogram.class.getDeclaredField("totalHistogram");
      byOp.setAccessible(true);
      total.setAccessible(true);
      Map<String, OneMeasurement> measured = (Map<String, OneMeasurement>) byOp.get(Measurements.getMeasurements());
      Histogram all = null;
      for (String op : ops.split(",")) {
        OneMeasurement m = measured.get(op);
        Histogram h = m instanceof OneMeasurementHdrHistogram ? (Histogram) total.get(m) : null;
        if (h != null) {
          if (all == null) {
            all = h.copy();
          } else {
            all.add(h);
          }
        }
      }
      if (all == null || all.getTotalCount() == 0) {
        return;
      }
      String p = "[STORBENCH-OVERALL], ";
      System.err.println(p + "Operations, " + all.getTotalCount());
      System.err.println(p + "AverageLatency(us), " + all.getMean());
      System.err.println(p + "MaxLatency(us), " + all.getMaxValue());
      System.err.println(p + "95thPercentileLatency(us), " + all.getValueAtPercentile(95));
      System.err.println(p + "99thPercentileLatency(us), " + all.getValueAtPercentile(99));
      System.err.flush();
    } catch (ReflectiveOperationException | RuntimeException e) {
      System.err.println("[STORBENCH-OVERALL], Error, " + e);
    }
  }
}
