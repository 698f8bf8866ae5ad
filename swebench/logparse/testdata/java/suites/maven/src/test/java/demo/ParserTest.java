package demo;

import static org.junit.Assert.assertEquals;
import org.junit.Test;

public class ParserTest {
  @Test public void parsesNumbers() { assertEquals(3, Integer.parseInt("3")); }
  @Test public void parsesHex() { assertEquals(255, Integer.parseInt("ff", 16)); }
  @Test public void rejectsSigns() { assertEquals(-1, Integer.parseInt("+1")); }
}
