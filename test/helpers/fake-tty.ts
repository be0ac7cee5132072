import { Writable } from 'node:stream';

/** A terminal's stderr: what it shows after the bytes written to it (\r, \n and "erase line" understood). */
export class FakeTty extends Writable {
  readonly isTTY = true;
  readonly columns = 100;
  readonly screen: string[] = [''];
  private col = 0;

  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    let text = chunk.toString();
    while (text.length > 0) {
      if (text.startsWith('\x1b[2K')) {
        this.screen[this.screen.length - 1] = '';
        text = text.slice(4);
        continue;
      }
      const c = text[0]!;
      text = text.slice(1);
      if (c === '\r') this.col = 0;
      else if (c === '\n') {
        this.screen.push('');
        this.col = 0;
      } else {
        const line = this.screen[this.screen.length - 1]!.padEnd(this.col);
        this.screen[this.screen.length - 1] = line.slice(0, this.col) + c + line.slice(this.col + 1);
        this.col++;
      }
    }
    done();
  }
}
