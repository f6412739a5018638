package storbench.ycsb;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import site.ycsb.measurements.Measurements;
import site.ycsb.workloads.CoreWorkload;

/**
 * Draws key numbers with YCSB core's own run-phase key choice ({@code CoreWorkload.nextKeynum},
 * after {@code CoreWorkload.init} with the given properties) and prints their counts as JSON:
 * {"draws": N, "counts": {"keynum": n, ...}}.
 *
 * <pre>java -cp ... storbench.ycsb.YcsbKeys draws=N recordcount=R operationcount=O requestdistribution=zipfian ...</pre>
 */
public final class YcsbKeys {
  private YcsbKeys() {
  }

  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    long draws = 100000;
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq < 0) {
        System.err.println("YcsbKeys: expected NAME=VALUE, got " + arg);
        System.exit(2);
      }
      String name = arg.substring(0, eq);
      String value = arg.substring(eq + 1);
      if (name.equals("draws")) {
        draws = Long.parseLong(value);
      } else {
        props.setProperty(name, value);
      }
    }
    props.putIfAbsent("operationcount", "0");
    Measurements.setProperties(props);
    CoreWorkload workload = new CoreWorkload();
    workload.init(props);
    Method next = CoreWorkload.class.getDeclaredMethod("nextKeynum");
    next.setAccessible(true);
    Map<Long, Long> counts = new TreeMap<>();
    for (long i = 0; i < draws; i++) {
      counts.merge((Long) next.invoke(workload), 1L, Long::sum);
    }
    StringBuilder out = new StringBuilder("{\"draws\": ").append(draws).append(", \"counts\": {");
    boolean first = true;
    for (Map.Entry<Long, Long> e : counts.entrySet()) {
      out.append(first ? "" : ", ").append('"').append(e.getKey()).append("\": ").append(e.getValue());
      first = false;
    }
    System.out.println(out.append("}}"));
  }
}
