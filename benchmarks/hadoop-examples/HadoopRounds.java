// The named peer of benchmarks/terasort_vs_hadoop.py, kept in one JVM: Hadoop's own TeraGen and TeraSort
// (hadoop-mapreduce-examples), one job per line read from stdin ("teragen ARGS" | "terasort ARGS"), each
// followed by "ROUND-DONE <exit code>" on stdout; "rm URI" removes a job's output (recursively, any file system,
// e.g. HDFS in --yarn runs) the same way. One JVM for every round, as storbench's side keeps one
// Spark session: JVM start-up is outside every round, and a warm-up job warms its JIT as Spark's is warmed.
//
// Provider: MapReduce local mode as Hadoop's LocalClientProtocolProvider makes it, without the line that pins
// mapreduce.job.maps to 1, so TeraGen runs as many maps as it is given (the slots of storbench's local[N]).
// It is found first by ServiceLoader because its directory comes first on the classpath.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.examples.terasort.TeraGen;
import org.apache.hadoop.examples.terasort.TeraSort;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.LocalJobRunner;
import org.apache.hadoop.mapreduce.protocol.ClientProtocol;
import org.apache.hadoop.mapreduce.protocol.ClientProtocolProvider;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;

public class HadoopRounds {
  public static class Provider extends ClientProtocolProvider {
    @Override
    public ClientProtocol create(Configuration conf) throws IOException {
      if (!"local".equals(conf.get("mapreduce.framework.name", "local"))) {
        return null;
      }
      return new LocalJobRunner(conf);
    }

    @Override
    public ClientProtocol create(InetSocketAddress address, Configuration conf) {
      return null;
    }

    @Override
    public void close(ClientProtocol protocol) {
    }
  }

  public static void main(String[] ignored) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    for (String line; (line = in.readLine()) != null; ) {
      String[] words = line.trim().split(" +");
      if (words[0].equals("rm")) {
        Path path = new Path(words[1]);
        path.getFileSystem(new Configuration()).delete(path, true);
        System.out.println("ROUND-DONE 0");
        System.out.flush();
        continue;
      }
      Tool tool = words[0].equals("teragen") ? new TeraGen() : new TeraSort();
      int rc = ToolRunner.run(new Configuration(), tool, Arrays.copyOfRange(words, 1, words.length));
      System.out.println("ROUND-DONE " + rc);
      System.out.flush();
    }
  }
}
