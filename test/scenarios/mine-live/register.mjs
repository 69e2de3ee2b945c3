// node --import register.mjs main.js ...: the apps play this folder's kinds.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
