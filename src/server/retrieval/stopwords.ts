// Function words of English and Portuguese: dropped from the index, and used to tell the two languages apart.

export const ENGLISH_STOPWORDS = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being below between both " +
    "but by can could did do does doing down during each few for from further had has have having he her here hers " +
    "herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on " +
    "once only or other our ours ourselves out over own same she should so some such than that the their theirs them " +
    "themselves then there these they this those through to too under until up very was we were what when where " +
    "which while who whom why will with would you your yours yourself yourselves also may might must shall upon " +
    "via whether yet within without"
  ).split(" "),
);

export const PORTUGUESE_STOPWORDS = new Set(
  (
    "a à ao aos aquela aquelas aquele aqueles aquilo as às até com como da das de dela delas dele deles depois do dos " +
    "e é ela elas ele eles em entre era eram essa essas esse esses esta estas este estes eu foi fomos for foram " +
    "fosse há isso isto já lhe lhes mais mas me mesmo meu meus minha minhas muito na nas não nem no nos nós nossa " +
    "nossas nosso nossos num numa o os ou para pela pelas pelo pelos por qual quando que quem se seja sem ser seu " +
    "seus só sua suas também te tem têm ter teu tu tua um uma umas uns você vocês vos ao são está estão sobre " +
    "onde cujo cuja cujos cujas lo la los las pois porque"
  ).split(" "),
);
