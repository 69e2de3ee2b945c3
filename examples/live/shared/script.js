// The model's side of one conversation, played step by step (the steps of
// kinds.js). Each agent's scripted model reads the same Script, so the
// script says both what the model answers and which agent must be asking:
// a script that does not follow what the framework really does (say, an
// agent it did not run) fails at once, instead of passing unnoticed.

/** Script is the steps of one conversation, in the order the framework asks for them. */
export class Script {
  /** @param {string} name for errors and call IDs @param {object[][]} turns the steps of each user turn */
  constructor(name, turns) {
    this.name = name;
    this.turns = turns.map((steps) => [...steps]); // ifRan steps are spliced in
    this.turn = -1;
    this.next = 0;
    this.calls = 0; // calls handed out, for call IDs unique in the conversation
    this.pending = null; // the last step, while its ifRan steps wait on whether it ran
  }

  /** startTurn begins the next user turn's steps. */
  startTurn() {
    this.turn++;
    this.next = 0;
  }

  /**
   * reply is the next step of the turn, which `agent` must be the one to ask
   * for; denied says whether the guard denied the call of the step before.
   */
  reply(agent, denied = false) {
    const steps = this.turns[this.turn];
    if (this.pending && !denied) steps.splice(this.next, 0, ...this.pending.ifRan);
    this.pending = null;
    const where = `${this.name}, turn ${this.turn + 1}, reply ${this.next + 1}`;
    if (!steps || this.next >= steps.length) {
      throw new Error(`${where}: ${agent} asked the model for more than the script has`);
    }
    const step = steps[this.next++];
    if (step.agent !== agent) {
      throw new Error(`${where}: ${agent} asked the model, the script has ${step.agent} ask`);
    }
    if (step.ifRan?.length > 0) this.pending = step;
    return step;
  }

  /** nextCall numbers the next call the model makes (1, 2, ...). */
  nextCall() {
    return ++this.calls;
  }

  /** endTurn fails if the framework did not ask for every step of the turn. */
  endTurn() {
    const left = this.turns[this.turn].length - this.next;
    if (left !== 0) {
      throw new Error(`${this.name}, turn ${this.turn + 1}: ${left} scripted replies were never asked for`);
    }
  }
}
