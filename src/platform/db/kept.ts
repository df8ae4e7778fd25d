/**
 * What the code keeps for the life of one database handle: memos of what it read through the
 * handle (schedules, itineraries) and work under way on it (the recomputations of a trip, chained).
 * The handle owns it (Db.kept), so it is made and dropped with the handle, never shared by two
 * handles, and the readers that receive only the Db reach it without a parameter more.
 */
export class Kept {
  private readonly parts = new Map<new () => unknown, unknown>();

  /** The one `Part` of this handle: made on the first call, the same object afterwards. */
  of<T>(Part: new () => T): T {
    let part = this.parts.get(Part) as T | undefined;
    if (part === undefined) this.parts.set(Part, (part = new Part()));
    return part;
  }
}
