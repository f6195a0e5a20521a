/**
 * Memory for response bodies, recycled. A response of tens of kilobytes in
 * a fresh buffer costs more in allocation, page faults and garbage
 * collection than in copying, so bodies are carved out of large slabs and a
 * slab is reused once every response written from it has been handed to
 * the socket ('close' on the response: finished or aborted). A response
 * that never reports back only keeps its slab out of the free list; the
 * garbage collector takes it like any buffer.
 *
 * Only responses written to a real socket are pooled: there 'close' comes
 * after the socket has taken the bytes. Other transports (Fastify's inject)
 * may hold on to the buffer itself, so they get one of their own.
 */
import type { ServerResponse } from 'node:http';
import { Socket } from 'node:net';

const SLAB_SIZE = 1 << 20;
/** Larger bodies get a buffer of their own. */
const MAX_POOLED = SLAB_SIZE / 4;
/** Free slabs kept for reuse beyond the one being filled. */
const MAX_FREE = 8;

class Slab {
  readonly memory = Buffer.allocUnsafeSlow(SLAB_SIZE);
  used = 0;
  pending = 0;
}

export class ResponseBuffers {
  private current = new Slab();
  private readonly free: Slab[] = [];

  /**
   * A buffer of `length` bytes for the body of `response`; its memory goes
   * back to the pool when the response closes.
   */
  take(length: number, response: ServerResponse): Buffer {
    if (length > MAX_POOLED || !(response.socket instanceof Socket)) return Buffer.allocUnsafe(length);
    if (this.current.used + length > SLAB_SIZE) {
      const full = this.current;
      this.current = this.free.pop() ?? new Slab();
      this.current.used = 0;
      if (full.pending === 0) this.recycle(full);
    }
    const slab = this.current;
    const buffer = slab.memory.subarray(slab.used, slab.used + length);
    slab.used += length;
    slab.pending += 1;
    response.once('close', () => this.release(slab));
    return buffer;
  }

  private release(slab: Slab): void {
    slab.pending -= 1;
    if (slab.pending === 0 && slab !== this.current) this.recycle(slab);
  }

  private recycle(slab: Slab): void {
    if (this.free.length < MAX_FREE) this.free.push(slab);
  }
}
